# Spack recipe for mantissa. Use it from this repository:
#   spack repo add spack && spack install mantissa +cuda cuda_arch=100
# or with the environment in spack.yaml at the top of the repository.
from spack.package import *


class Mantissa(CMakePackage, CudaPackage, ROCmPackage):
    """FP64 physics, lower precisions and transformer surrogates, side by side:
    a Kokkos code that measures what reduced precision and learned surrogates
    buy on a given machine."""

    homepage = "https://github.com/mantissa-hpc/mantissa"
    git = "https://github.com/mantissa-hpc/mantissa.git"

    maintainers("mantissa-hpc")
    license("BSD-3-Clause")

    version("main", branch="main")

    # Variants map one to one onto the CMake options Mantissa_ENABLE_<X>.
    variant("tests", default=False, description="Build the test suite (Mantissa_ENABLE_TESTS)")
    variant("benchmarks", default=False, description="Build bench/ (Mantissa_ENABLE_BENCHMARKS)")
    variant("onednn", default=True, description="oneDNN bf16 GEMM on CPUs (Mantissa_ENABLE_ONEDNN)")
    variant("gpu_aware_mpi", default=False,
            description="Pass device pointers to MPI (Mantissa_ENABLE_GPU_AWARE_MPI)")
    variant("native", default=False,
            description="-march=native on mantissa's code (Mantissa_ENABLE_NATIVE_ARCH); "
            "off by default because Kokkos' arch variants already name the target")
    variant("openmp", default=True, description="Kokkos OpenMP host back-end")
    variant("vendor_gemm", default=True,
            description="cuBLASLt bf16/fp16/fp8 GEMM for the surrogate with +cuda "
            "(Mantissa_ENABLE_VENDOR_GEMM)")
    variant("hipblaslt", default=False,
            description="hipBLASLt bf16/fp16/fp8 GEMM with +rocm (Mantissa_ENABLE_HIPBLASLT); "
            "off by default: that path has not been compiled yet")

    depends_on("cmake@3.20:", type="build")
    depends_on("cxx", type="build")
    depends_on("c", type="build")

    depends_on("kokkos@3.4.01:5")
    depends_on("kokkos-kernels@3.4.01:5")
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos-kernels+blas", when="~cuda~rocm")
    depends_on("mpi")
    depends_on("hdf5@1.10:+mpi")
    depends_on("yaml-cpp@0.6:")
    depends_on("cli11@2:")
    depends_on("fmt@8:")
    depends_on("blas")
    depends_on("onednn", when="+onednn")
    depends_on("googletest", when="+tests")
    depends_on("benchmark", when="+benchmarks")

    # Post-processing and the PyTorch oracle of the tests.
    depends_on("python@3.8:", type=("run", "test"))
    depends_on("py-numpy", type=("run", "test"))
    depends_on("py-h5py", type=("run", "test"))
    depends_on("py-matplotlib", type=("run", "test"))
    depends_on("py-torch", type="test", when="+tests")

    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda+cuda_lambda cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
        depends_on(f"kokkos-kernels+cuda+cublas cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
    for _arch in ROCmPackage.amdgpu_targets:
        depends_on(f"kokkos+rocm amdgpu_target={_arch}", when=f"+rocm amdgpu_target={_arch}")
        depends_on(f"kokkos-kernels+rocm+rocblas amdgpu_target={_arch}",
                   when=f"+rocm amdgpu_target={_arch}")
    depends_on("hipblaslt", when="+rocm+hipblaslt")
    conflicts("+hipblaslt", when="~rocm", msg="hipBLASLt needs the ROCm back-end")
    conflicts("+cuda", when="+rocm", msg="choose one device back-end")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("Mantissa_ENABLE_TESTS", "tests"),
            self.define_from_variant("Mantissa_ENABLE_BENCHMARKS", "benchmarks"),
            self.define_from_variant("Mantissa_ENABLE_ONEDNN", "onednn"),
            self.define_from_variant("Mantissa_ENABLE_GPU_AWARE_MPI", "gpu_aware_mpi"),
            self.define_from_variant("Mantissa_ENABLE_NATIVE_ARCH", "native"),
            self.define_from_variant("Mantissa_ENABLE_VENDOR_GEMM", "vendor_gemm"),
            self.define_from_variant("Mantissa_ENABLE_HIPBLASLT", "hipblaslt"),
            self.define("Kokkos_ROOT", spec["kokkos"].prefix),
            self.define("KokkosKernels_ROOT", spec["kokkos-kernels"].prefix),
        ]
        if spec.satisfies("+cuda") or spec.satisfies("+rocm"):
            args.append(self.define("CMAKE_CXX_COMPILER", spec["kokkos"].kokkos_cxx))
        # Kokkos 5 requires C++20; 3.4-4.x work with C++17.
        if spec.satisfies("^kokkos@5:"):
            args.append(self.define("CMAKE_CXX_STANDARD", "20"))
        return args
