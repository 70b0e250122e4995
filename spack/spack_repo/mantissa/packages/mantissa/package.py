# Spack recipe for mantissa (package API v2). Use it from this repository:
#   spack repo add spack/spack_repo/mantissa
#   spack install mantissa +cuda cuda_arch=100          # NVIDIA B200
#   spack install mantissa +rocm amdgpu_target=gfx950   # AMD MI355X
# or with the environment in spack.yaml at the top of the repository. How the recipe was
# checked (audit, concretization, offline): docs/portability.md, "Spack".
from spack_repo.builtin.build_systems.cmake import CMakePackage
from spack_repo.builtin.build_systems.cuda import CudaPackage
from spack_repo.builtin.build_systems.rocm import ROCmPackage

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
    variant(
        "werror",
        default=False,
        description="Warnings in mantissa's own code are errors (Mantissa_ENABLE_WERROR); "
        "off for installs, so that a newer compiler's new warning does not fail one",
    )
    # oneDNN serves the bf16 GEMM of the host back-ends only; GPU builds never use it.
    variant(
        "onednn",
        default=True,
        when="~cuda ~rocm",
        description="oneDNN bf16 GEMM on CPUs (Mantissa_ENABLE_ONEDNN)",
    )
    variant(
        "gpu_aware_mpi",
        default=False,
        description="Pass device pointers to MPI (Mantissa_ENABLE_GPU_AWARE_MPI)",
    )
    variant(
        "native",
        default=False,
        description="-march=native on mantissa's code (Mantissa_ENABLE_NATIVE_ARCH); "
        "off by default because Kokkos' arch variants already name the target",
    )
    variant("openmp", default=True, description="Kokkos OpenMP host back-end")
    variant(
        "vendor_gemm",
        default=True,
        when="+cuda",
        description="cuBLASLt bf16/fp16/fp8 GEMM for the surrogate (Mantissa_ENABLE_VENDOR_GEMM)",
    )
    variant(
        "hipblaslt",
        default=False,
        when="+rocm",
        description="hipBLASLt bf16/fp16/fp8 GEMM (Mantissa_ENABLE_HIPBLASLT); off by default: "
        "that path has been compiled but never run",
    )

    depends_on("cmake@3.20:", type="build")
    depends_on("cxx", type="build")
    depends_on("c", type="build")

    # Versions: what mantissa is built and tested against (docs/portability.md). Its CMake
    # accepts Kokkos 3.4.01 to 5.x; CI builds and tests against Kokkos 3.4.01 (Debian 12, not
    # in Spack); Kokkos 4.6.01 was built and tested with OpenMP in C++20 and compiled for
    # CUDA (sm_90) and HIP (gfx90a). Blackwell (cuda_arch=100) needs Kokkos 4.7+ and gfx950
    # (MI355X) needs Kokkos 5.1+ (the kokkos recipe says so), so GPU builds may take up to 5.1,
    # which has not been compiled here yet: widen the ranges after a build and a test run.
    depends_on("kokkos@4.6.01:4.6", when="~cuda ~rocm")
    depends_on("kokkos@4.6.01:5.1", when="+cuda")
    depends_on("kokkos@4.6.01:5.1", when="+rocm")
    # kokkos-kernels pins its kokkos to the same version itself.
    depends_on("kokkos-kernels")
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos-kernels+openmp", when="+openmp")
    depends_on("kokkos-kernels+blas", when="~cuda ~rocm")

    # Debian 12's versions, against which every test runs.
    depends_on("mpi")
    conflicts(
        "^openmpi@5:",
        msg="mantissa is built and tested with Open MPI 4.1 (Debian 12); 5.x has not been tried",
    )
    depends_on("hdf5@1.10.8:1.10 +mpi")
    depends_on("yaml-cpp@0.7")
    depends_on("cli11@2.3")
    depends_on("fmt@9")
    depends_on("onednn@2.7", when="+onednn")
    depends_on("googletest@1.12", type=("build", "link"), when="+tests")

    # Post-processing scripts (share/mantissa/postprocess) and the tests' PyTorch oracle.
    # MANTISSA_PYTHON (cmake_args) is this python: the postprocess scripts are installed
    # with it as their interpreter, and +tests checks at configure time that it has torch.
    depends_on("python@3.8:", type=("build", "run", "test"))
    depends_on("py-numpy", type=("run", "test"))
    depends_on("py-h5py", type=("run", "test"))
    depends_on("py-matplotlib", type=("run", "test"))
    depends_on("py-torch", type=("build", "test"), when="+tests")

    # CUDA: nvcc through Kokkos' wrapper (Kokkos refuses +cuda without +wrapper unless the
    # compiler is clang); Kokkos 4 needs lambda support switched on, Kokkos 5 always has it
    # (the variant no longer exists there).
    depends_on("cuda@12.8:", when="+cuda cuda_arch=100")
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda+wrapper cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
        depends_on(
            f"kokkos-kernels+cuda+cublas cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}"
        )
    conflicts(
        "^kokkos@:4 ~cuda_lambda",
        when="+cuda",
        msg="mantissa's device lambdas need kokkos+cuda_lambda with Kokkos 4",
    )

    # ROCm: kokkos-kernels has no rocm/amdgpu_target variants of its own; its BLAS is rocBLAS,
    # which must be built for the same target (its default is amdgpu_target=auto).
    for _arch in ROCmPackage.amdgpu_targets:
        depends_on(f"kokkos+rocm amdgpu_target={_arch}", when=f"+rocm amdgpu_target={_arch}")
        depends_on(f"rocblas amdgpu_target={_arch}", when=f"+rocm amdgpu_target={_arch}")
    depends_on("kokkos-kernels+rocblas", when="+rocm")
    depends_on("hipblaslt", when="+hipblaslt")
    for _arch in ROCmPackage.amdgpu_targets:
        depends_on(f"hipblaslt amdgpu_target={_arch}", when=f"+hipblaslt amdgpu_target={_arch}")

    conflicts("+cuda", when="+rocm", msg="choose one device back-end")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("Mantissa_ENABLE_TESTS", "tests"),
            self.define_from_variant("Mantissa_ENABLE_BENCHMARKS", "benchmarks"),
            self.define_from_variant("Mantissa_ENABLE_WERROR", "werror"),
            self.define_from_variant("Mantissa_ENABLE_GPU_AWARE_MPI", "gpu_aware_mpi"),
            self.define_from_variant("Mantissa_ENABLE_NATIVE_ARCH", "native"),
            self.define("Mantissa_ENABLE_ONEDNN", spec.satisfies("+onednn")),
            self.define("Mantissa_ENABLE_VENDOR_GEMM", spec.satisfies("+vendor_gemm")),
            self.define("Mantissa_ENABLE_HIPBLASLT", spec.satisfies("+hipblaslt")),
            self.define("MANTISSA_PYTHON", spec["python"].command.path),
            self.define("Kokkos_ROOT", spec["kokkos"].prefix),
            self.define("KokkosKernels_ROOT", spec["kokkos-kernels"].prefix),
        ]
        # The compiler Kokkos was built with: nvcc_wrapper for CUDA, hipcc for HIP unless
        # Kokkos itself was built with clang/rocmcc (as kokkos-kernels decides).
        if spec.satisfies("^kokkos+rocm") and not (
            spec.satisfies("^kokkos %cxx=clang") or spec.satisfies("^kokkos %cxx=rocmcc")
        ):
            args.append(self.define("CMAKE_CXX_COMPILER", spec["hip"].hipcc))
        elif spec.satisfies("+cuda"):
            args.append(self.define("CMAKE_CXX_COMPILER", self["kokkos"].kokkos_cxx))
        # Kokkos 5 requires C++20; 3.4-4.x work with C++17.
        if spec.satisfies("^kokkos@5:"):
            args.append(self.define("CMAKE_CXX_STANDARD", "20"))
        return args
