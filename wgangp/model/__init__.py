"""The model: generator and critic networks, the WGAN-GP losses and penalty, the optimizer.

Pure TensorFlow/Keras building blocks; they know nothing of data files, tracking or the loop.
"""
