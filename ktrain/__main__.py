from ktrain.cli import run

run()
