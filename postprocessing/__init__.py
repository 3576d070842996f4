"""Pure post-processing: probability map -> boxes -> crops; CTC -> text. No Triton imports."""
