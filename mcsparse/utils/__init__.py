"""Shared C types (``_typedefs.pxd``) and validation helpers."""
