"""The compiled hot path (checker/search/_native.c), built by `pip install`.

optional=True: where no C compiler is at hand the install still succeeds and
kmc runs its pure-Python equivalents (checker/search/native.py says which is in use).
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("checker.search._native", ["checker/search/_native.c"], optional=True,
                             depends=["checker/search/_claims.h"],
                             extra_compile_args=["-O2"])])
