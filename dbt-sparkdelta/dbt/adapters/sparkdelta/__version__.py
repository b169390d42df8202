version = "1.12.1"
