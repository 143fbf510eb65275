"""Test helpers of the repository; not part of the installed package.

`testing_utils` (serialization checks, a NumPy reference BERT and writers of
tiny checkpoints, the development data beside a source checkout),
`trainer_testing` (a tiny teacher, tiny gin bindings, the trainer binary as a
subprocess) and `distillation_testing` (stage I runs written without
training). setup.cfg installs only `mixvocab_tf*`: these serve the tests
alone and read data outside the package. The root `conftest.py` puts the
repository root on the path of every test run.
"""
