"""Many nodes at once: ``setup-env fleet report | slurm | k8s``.

* :mod:`setup_env.fleet.model`: a node's ``check --json`` document -> a :class:`Node` (reads files);
* :mod:`setup_env.fleet.report`: pure: nodes -> a :class:`FleetReport` (rows, drift, unhealthy
  GPUs, slow GPUs against the fleet median, the nodes to look at first, the exit code);
* :mod:`setup_env.fleet.render`: the report as text, JSON, Markdown or a self-contained HTML page
  with an inline SVG picture;
* :mod:`setup_env.fleet.launchers`: an sbatch script for SLURM and manifests for Kubernetes that
  run ``check --json`` on every node and the multi-node all-reduce, then ``fleet report``.
"""
