"""The Streamlit app: the window onto evalcore (entry script: ``app/streamlit_app.py``)."""
