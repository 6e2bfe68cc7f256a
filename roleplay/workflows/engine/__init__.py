"""The workflows' pure rules: contracts, the static planner, the executor, the prompt
compiler and the bounded runtime. No Django."""
