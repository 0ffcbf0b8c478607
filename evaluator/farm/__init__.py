"""Device farms: a self-healing pool of devices, and the executors that run tasks on them
(local threads, or Ray actors placed on the hosts that hold the phones)."""
