from django.test import TestCase
