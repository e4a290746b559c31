"""GPU benchmarks of the course's reference kernels: ``python bench/run.py --help``."""
