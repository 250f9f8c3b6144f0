import pytest
