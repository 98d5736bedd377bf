from setup_env.cli import main

raise SystemExit(main())
