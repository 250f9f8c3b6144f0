class Store
