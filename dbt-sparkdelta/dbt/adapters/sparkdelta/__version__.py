version = "1.12.0"
