# dpdyn ode plot (data file as argument)
