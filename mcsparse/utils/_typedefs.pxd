# Shared C types for the Cython modules of mcsparse.
#
# ``floating`` (float32 or float64) comes from Cython's fused types; indices
# and labels are ``intp_t``, which is numpy.intp (Py_ssize_t) on every
# platform numpy supports.
from cython cimport floating

ctypedef double float64_t
ctypedef float float32_t
ctypedef Py_ssize_t intp_t
