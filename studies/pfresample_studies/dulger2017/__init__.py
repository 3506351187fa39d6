"""Dülger (2017), "Parallel resampling": the catalog of its experiments,
its weight datasets, resampling and filter experiments, tables and figures."""
