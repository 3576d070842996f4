# The Triton Conceptual Guide's Part 5 client, unchanged except that the server address and
# the image path come from the command line (the guide hard-codes localhost:8001 and img1.jpg).
import sys

import numpy as np
import tritonclient.grpc as grpcclient

url, image_path = sys.argv[1], sys.argv[2]

client = grpcclient.InferenceServerClient(url=url)

image_data = np.fromfile(image_path, dtype="uint8")
image_data = np.expand_dims(image_data, axis=0)

input_tensors = [grpcclient.InferInput("input_image", image_data.shape, "UINT8")]
input_tensors[0].set_data_from_numpy(image_data)
results = client.infer(model_name="ensemble_model", inputs=input_tensors)
output_data = results.as_numpy("recognized_text").astype(str)
print(output_data)
