"""Resampling methods: the CPU reference kernels, one module a family, and
``registry`` (above them and the CUDA launchers: tests/library/test_layers.py)."""
