# The views of `latprof report` (report/lp_views.c): every view's JSON
# against its schema, on a real recording and on the real GPU captures.
lp_py_test(report_view_schemas test_view_schemas.py LABELS e2e)
# Imported captures: the same request count and honestly named totals in
# every section.
lp_py_test(report_capture_totals test_capture_totals.py LABELS e2e)
