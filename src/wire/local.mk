# src/wire: build rules for this folder (filled in as the layer grows).
