"""Speed targets as ratios against a baseline measured in the same run (`nox -s bench`,
`nox -s bench_jobs`, `nox -s bench_ray`), over synthetic corpora (`synthetic`)."""
