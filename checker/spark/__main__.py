"""python -m checker.spark check SPEC [options]: kmc check with the spark engine."""
from checker.spark.cli import main

main()
