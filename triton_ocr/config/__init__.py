"""The config layer: the model repository's config.pbtxt files read into settings objects.

`Repository(path, pack)` is the one entry: configs, model files, tensor names, the alphabet and
the pipeline's settings. `parse` turns a config's `parameters` map into the plain settings
objects of triton_ocr.settings; `requests` applies a request's parameters on top.
"""
