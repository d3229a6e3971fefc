"""Small building blocks every layer may use."""
