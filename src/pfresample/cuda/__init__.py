"""The CUDA backend: the kernels of ``gpu_kernels/`` run through CuPy.

``kernels`` finds and compiles the sources, ``geometry`` holds every launch
parameter, ``workspace`` the device buffers of a call, ``stats`` the weight
statistics and B on the device; ``cumulative``, ``iterative`` and
``rejection`` launch one family each, ``offspring`` the offspring statistics,
and ``run`` puts a call together. Nothing here imports the public API:
``pfresample.api`` calls down into ``run`` with weights already checked.
"""
