def handle(inputs):
    return None
