"""``python -m renderer`` runs the CLI."""

from renderer.cli import main

main(prog_name="gpu-render")
