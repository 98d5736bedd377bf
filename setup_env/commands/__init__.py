"""One module per subcommand; see setup_env.cli."""
