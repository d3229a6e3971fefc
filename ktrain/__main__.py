from ktrain.launcher import run

run()
