# Stub of the module CMake writes at build time (native/build_info.py.in).
GIT_REVISION: str
