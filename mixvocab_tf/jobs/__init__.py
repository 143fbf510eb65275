"""Jobs: what chains trainer runs and exports into the method's steps.

The pipeline runner (`pipeline`), the main job's steps (`quickstart`),
reports (`report`), and the in-process export and conversion of a run
(`export_run`, `convert_run`) that the tools and the main job share. Studies
(the scaling study, the replication grid) live in `projects/` and register
their own step kinds (`pipeline.register_step_kind`).
"""
