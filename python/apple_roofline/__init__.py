"""apple_roofline (placeholder; the integrator fills the public API)."""
from ._version import __version__
