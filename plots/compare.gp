# dpdyn compare plot (data file as argument)
