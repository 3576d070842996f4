"""What measures and exercises the service, never imported by the runtime: bench, tune, eval,
soak and faults, with their one shared workload (the image set and the timed sender), the one
RapidOCR reference reader, the rendered samples and the demo."""
