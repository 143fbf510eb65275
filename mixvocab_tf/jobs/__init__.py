"""Jobs: what chains trainer runs and exports into the method's steps.

The pipeline runner (`pipeline`), steps as values (`steps`), the export step
every job ends with (`export_steps`), the main job's steps (`quickstart`),
the own-data job (`own_data`) and reports (`report`). Studies
(the scaling study, the replication grid) live in `projects/` and register
their own step kinds (`pipeline.register_step_kind`).
"""
