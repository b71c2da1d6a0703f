"""The output: a finished run to its files. results.write_run sends the
run's traces and the model's view once to each writer (text and JSON in
render.py, ITF in itf.py, HTML in trace_html.py, report.html in report.py,
lassos in lasso.py); traces.py reads a run folder back. Imports the search,
never the front (docs/ARCHITECTURE.md, "Layers")."""
