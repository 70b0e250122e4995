"""The peer measured beside mantissa_device_check on a GPU node: PyTorch's device copy
bandwidth and matrix-multiply rate (fp64, fp32, tf32, bf16, fp16), each the median of timed
repeats after warm-up, on random data (never zeros: they run faster than real data)."""
import sys
import time

import torch


def median_ms(fn, repeats=10):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def main():
    if not torch.cuda.is_available():
        print("torch_peer: no CUDA device")
        return 1
    dev = torch.device("cuda")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    n = 1 << 27
    a = torch.rand(n, dtype=torch.float64, device=dev)
    b = torch.empty_like(a)
    ms = median_ms(lambda: b.copy_(a))
    print(f"copy fp64 {n * 8 / 2**30:.0f} GiB: {2 * 8 * n / ms / 1e6:.1f} GB/s")
    del a, b
    size = 8192
    for name, dtype, tf32 in [("fp64", torch.float64, False), ("fp32", torch.float32, False),
                              ("tf32", torch.float32, True), ("bf16", torch.bfloat16, False),
                              ("fp16", torch.float16, False)]:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        m = size if dtype != torch.float64 else 4096
        x = torch.randn(m, m, dtype=dtype, device=dev)
        y = torch.randn(m, m, dtype=dtype, device=dev)
        ms = median_ms(lambda: x @ y)
        print(f"matmul {name} {m}^3: {2 * m**3 / ms / 1e9:.1f} TFLOP/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
