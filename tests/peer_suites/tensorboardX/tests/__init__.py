import torch
import tensorboardX.proto
