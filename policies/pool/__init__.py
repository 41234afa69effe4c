"""How many fetches run at once (Talim, Liu, Nain & Coffman): the M/M/c/K queue's static
optimum (`mm1k`), the MDP's dynamic policy (`fetcher_mdp`), the pool policies built on
them (`fetcher_pool`) and the online estimates of their rates (`rates`)."""
