# src/metrics: build rules for this folder (filled in as the layer grows).
