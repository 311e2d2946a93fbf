# dpdyn simulate plot (data file as argument)
