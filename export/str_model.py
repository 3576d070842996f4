"""The None-ResNet-None-CTC scene-text recognizer (Baek et al., ICCV 2019), as the guide uses it.

No transformation, a ResNet feature extractor, no sequence model, a linear CTC head over
37 classes (blank + 0-9a-z). Module names reproduce the published checkpoint's state_dict
(`FeatureExtraction.ConvNet.*`, `Prediction.*`) so it loads strictly; the expected names and
shapes are in ../shared/fixtures/str_state_dict_manifest.json.

Input: [N, 1, 32, 100] grayscale in [-1, 1]. Output of the model: [N, 26, 37] logits.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import torch
from torch import nn

ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"  # after the CTC blank at index 0
INPUT_SHAPE = (1, 32, 100)  # channels, height, width
CHECKPOINT_PREFIX = "module."  # the checkpoint was saved from nn.DataParallel


def conv_bn(
    cin: int, cout: int, kernel: int, stride=1, padding=0
) -> tuple[nn.Conv2d, nn.BatchNorm2d]:
    return nn.Conv2d(cin, cout, kernel, stride, padding, bias=False), nn.BatchNorm2d(cout)


class BasicBlock(nn.Module):
    """Two 3x3 conv+BN layers with an identity (or 1x1 projection) shortcut."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv1, self.bn1 = conv_bn(cin, cout, 3, padding=1)
        self.conv2, self.bn2 = conv_bn(cout, cout, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if cin != cout:
            self.downsample = nn.Sequential(*conv_bn(cin, cout, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + shortcut)


def residual_stage(cin: int, cout: int, blocks: int) -> nn.Sequential:
    return nn.Sequential(
        BasicBlock(cin, cout), *(BasicBlock(cout, cout) for _ in range(blocks - 1))
    )


class ResNetBackbone(nn.Module):
    """32x100 image -> 512 x 1 x 26 feature map (one column per CTC time step).

    Four residual stages (1, 2, 5, 3 blocks) of 128, 256, 512, 512 channels, each followed by a
    conv+BN; pooling halves the height at every stage but keeps width from stage 3 on.
    """

    def __init__(self, input_channels: int = 1, output_channels: int = 512) -> None:
        super().__init__()
        c = output_channels
        widths = (c // 4, c // 2, c, c)
        self.relu = nn.ReLU(inplace=True)
        self.conv0_1, self.bn0_1 = conv_bn(input_channels, c // 16, 3, padding=1)
        self.conv0_2, self.bn0_2 = conv_bn(c // 16, c // 8, 3, padding=1)
        self.maxpool1 = nn.MaxPool2d(2, 2)
        self.layer1 = residual_stage(c // 8, widths[0], 1)
        self.conv1, self.bn1 = conv_bn(widths[0], widths[0], 3, padding=1)
        self.maxpool2 = nn.MaxPool2d(2, 2)
        self.layer2 = residual_stage(widths[0], widths[1], 2)
        self.conv2, self.bn2 = conv_bn(widths[1], widths[1], 3, padding=1)
        self.maxpool3 = nn.MaxPool2d(2, stride=(2, 1), padding=(0, 1))
        self.layer3 = residual_stage(widths[1], widths[2], 5)
        self.conv3, self.bn3 = conv_bn(widths[2], widths[2], 3, padding=1)
        self.layer4 = residual_stage(widths[2], widths[3], 3)
        self.conv4_1, self.bn4_1 = conv_bn(widths[3], widths[3], 2, stride=(2, 1), padding=(0, 1))
        self.conv4_2, self.bn4_2 = conv_bn(widths[3], widths[3], 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        def cbr(conv: nn.Conv2d, bn: nn.BatchNorm2d, t: torch.Tensor) -> torch.Tensor:
            return self.relu(bn(conv(t)))

        x = cbr(self.conv0_2, self.bn0_2, cbr(self.conv0_1, self.bn0_1, x))
        x = cbr(self.conv1, self.bn1, self.layer1(self.maxpool1(x)))
        x = cbr(self.conv2, self.bn2, self.layer2(self.maxpool2(x)))
        x = cbr(self.conv3, self.bn3, self.layer3(self.maxpool3(x)))
        x = cbr(self.conv4_1, self.bn4_1, self.layer4(x))
        return cbr(self.conv4_2, self.bn4_2, x)


class FeatureExtraction(nn.Module):
    def __init__(self, input_channels: int, output_channels: int) -> None:
        super().__init__()
        self.ConvNet = ResNetBackbone(input_channels, output_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ConvNet(x)


class NoneResNetNoneCTC(nn.Module):
    """Image [N, 1, 32, 100] -> CTC logits [N, 26, num_classes]."""

    def __init__(
        self, input_channels: int = 1, output_channels: int = 512, num_classes: int = 37
    ) -> None:
        super().__init__()
        self.FeatureExtraction = FeatureExtraction(input_channels, output_channels)
        self.Prediction = nn.Linear(output_channels, num_classes)

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        features = self.FeatureExtraction(image)  # [N, C, H, T]
        # The original averages over H with AdaptiveAvgPool2d((None, 1)) on [N, T, C, H]; a mean
        # is the same operation and, unlike adaptive pooling, exports to ONNX.
        columns = features.mean(dim=2).transpose(1, 2)  # [N, T, C]
        return self.Prediction(columns.contiguous())


class WithSoftmax(nn.Module):
    """Exported head: class probabilities, so the server's CTC decode reports confidences."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model
        self.eval()

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.model(image), dim=2)


def strip_prefix(state: Mapping[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    return {k[len(prefix) :] if k.startswith(prefix) else k: v for k, v in state.items()}


def load_checkpoint(path: Path) -> NoneResNetNoneCTC:
    """Load the published (GPU-saved, DataParallel) checkpoint strictly on the CPU."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    if isinstance(state, Mapping) and "state_dict" in state:
        state = state["state_dict"]
    model = NoneResNetNoneCTC(num_classes=len(ALPHABET) + 1)
    model.load_state_dict(strip_prefix(state, CHECKPOINT_PREFIX), strict=True)
    return model.eval()


INPUT_NAME = "input"
OUTPUT_NAME = "probabilities"


def export_onnx(model: NoneResNetNoneCTC, target: Path, opset: int = 18) -> Path:
    """Write `model` + softmax as ONE self-contained ONNX file with a dynamic batch axis.

    Uses torch's default (torch.export-based) exporter: it takes `dynamic_shapes`, not the
    guide's `dynamic_axes`, and needs `external_data=False` to keep the weights inside the file.
    The alphabet goes into the metadata key `character`, one class per line (blank excluded),
    where the server reads it, as for the PP-OCR recognizer. The best-path head is appended.
    """
    import onnx

    from .recognizer_head import append_best_path_head

    example = torch.zeros(1, *INPUT_SHAPE)
    batch = torch.export.Dim("batch", min=1, max=4096)
    program = torch.onnx.export(
        WithSoftmax(model),
        (example,),
        input_names=[INPUT_NAME],
        output_names=[OUTPUT_NAME],
        dynamic_shapes=({0: batch},),
        opset_version=opset,
        dynamo=True,
        external_data=False,
    )
    proto = append_best_path_head(program.model_proto)
    entry = proto.metadata_props.add()
    entry.key, entry.value = "character", "\n".join(ALPHABET)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    onnx.save_model(proto, partial)
    partial.replace(target)
    return target
