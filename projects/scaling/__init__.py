"""The scaling study: mixed-vocabulary pretraining against NoKD by budget."""
