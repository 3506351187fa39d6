"""Package data: the CUDA sources of pfresample (one .cu file per family,
shared headers .cuh), compiled at run time by NVRTC (pfresample.cuda.kernels)."""
