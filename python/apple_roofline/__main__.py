"""``python -m apple_roofline``: the ``apple-roofline`` command line."""

from __future__ import annotations

from .cli import main

if __name__ == "__main__":
    main()
