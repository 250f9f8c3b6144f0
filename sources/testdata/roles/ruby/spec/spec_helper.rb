require 'acme'
