"""Pure memory engine modules: plain data in, plain data out, no Django."""
