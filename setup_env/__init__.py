"""setup-env: which PyTorch belongs on this machine, and does it really work?"""

__version__ = "0.1.0"
