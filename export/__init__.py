"""Getting and converting models into the Triton model repository."""
